package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.idempotency.Answer;

/** What a command's reply says in its headers, as its sender reads them. */
final class Replies {

    private Replies() {
    }

    /** The HTTP status the answer carries. */
    static int status(GetResponse reply) {
        return ((Number) reply.getProps().getHeaders().get(MessageSettlement.STATUS_HEADER)).intValue();
    }

    /** Whether the reply says it repeats an earlier answer under the same key. */
    static boolean repeat(GetResponse reply) {
        return Boolean.TRUE.equals(reply.getProps().getHeaders().get(Answer.REPLAYED_HEADER));
    }
}
