package io.payonce.order;

import io.quarkus.runtime.annotations.RegisterForReflection;
/** The answer to ship, complete and cancel: the order now, and whether this request moved it. */
@RegisterForReflection
public record StatusChangeView(OrderView order, boolean changed) {

    static StatusChangeView of(StatusChange change) {
        return new StatusChangeView(OrderView.of(change.order()), change.changed());
    }
}
