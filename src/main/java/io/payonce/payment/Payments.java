package io.payonce.payment;

import io.payonce.auth.Caller;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.payment.balance.BalancePayments;
import io.payonce.payment.card.CardPay;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The one door to pay an order, for both edges: an HTTP pay and a pay command from the broker come
 * through here, so that whichever way a pay arrives it meets the same guard, phases and recovery.
 * The request chooses the path: the owner's balance ({@link BalancePayments}) or a card through the
 * processor ({@link CardPay}). The amount is always the order's own.
 */
@ApplicationScoped
public class Payments {

    private final BalancePayments balance;
    private final CardPay card;

    Payments(BalancePayments balance, CardPay card) {
        this.balance = balance;
        this.card = card;
    }

    /** Pays order {@code orderId} for {@code caller}, its owner, once per key, as {@code request} says. */
    public Uni<Answer> pay(Caller caller, long orderId, KeyedRequest keyed, PayRequest request) {
        return request.method() == PaymentMethod.CARD ? card.pay(caller, orderId, keyed, request) : balance.pay(caller, orderId, keyed);
    }
}
