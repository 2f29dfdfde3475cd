package io.payonce.client.example;

// tag::example[]
import io.payonce.client.ClientListener;
import io.payonce.client.Order;
import io.payonce.client.Outcome;
import io.payonce.client.Payment;
import io.payonce.client.PayonceClient;
import io.payonce.client.Refund;
import io.payonce.client.RetryPolicy;

import java.net.URI;
import java.util.List;
import java.util.function.Supplier;

/** A shop's checkout on payonce: a deposit, an order paid from the balance and refunded, an order paid by card. */
public final class CheckoutExample {

    /** How often a card pay not known yet is asked here, a second apart, before it is left to a scheduled job. */
    private static final int ASKS = 5;

    private final PayonceClient buyer;
    private final PayonceClient operator;

    public CheckoutExample(URI payonce, Supplier<String> buyerTokens, Supplier<String> operatorTokens, RetryPolicy policy,
                           ClientListener listener) {
        // One client for the process, one view of it per caller: the views share its connections.
        this.buyer = new PayonceClient(List.of(payonce), buyerTokens, policy, listener);
        this.operator = buyer.as(operatorTokens);
    }

    /** 50.00 EUR in; an order of 19.99 paid, and paid again under the same key (a double click); 5.00 refunded. */
    public Refund payFromTheBalanceAndRefund(String userId, String orderSn) {
        // Every key comes from what it is about: a process that restarts sends the same keys again.
        valueOf(operator.deposit(userId, 5000, "EUR", "bank-transfer-" + orderSn, "deposit-" + orderSn));
        Order order = valueOf(buyer.createOrder(orderSn, 1999, "EUR"));

        Outcome<Payment> paid = buyer.pay(order.id(), "pay-" + orderSn);
        Outcome<Payment> clickedAgain = buyer.pay(order.id(), "pay-" + orderSn);
        if (!(clickedAgain instanceof Outcome.Succeeded<Payment> again && again.replayed() && again.value().equals(valueOf(paid)))) {
            throw new IllegalStateException("a repeat is the first payment, told again: " + clickedAgain);
        }
        return valueOf(operator.refund(order.id(), "r1", 500, "refund-" + orderSn + "-r1"));
    }

    /**
     * An order of 19.99 paid by card, through a processor whose answer may come late: the payment,
     * or, still not known after a few asks, Pending with the key to keep with the order.
     */
    public Outcome<Payment> payByCard(String orderSn) throws InterruptedException {
        Order order = valueOf(buyer.createOrder(orderSn, 1999, "EUR"));
        String key = "pay-" + orderSn;
        Outcome<Payment> card = buyer.payByCard(order.id(), "tok_visa", key);
        for (int asked = 1; asked < ASKS && card instanceof Outcome.Pending<Payment>; asked++) {
            // Not known yet, and not failed: the card may have been charged. Ask again under the same key, never a new one.
            Thread.sleep(1000);
            card = buyer.payByCard(order.id(), "tok_visa", key);
        }
        return card;
    }

    private static <T> T valueOf(Outcome<T> outcome) {
        if (outcome instanceof Outcome.Succeeded<T> succeeded) {
            return succeeded.value();
        }
        // Declined (402) and Refused carry the problem's code; Pending, the key to resume with.
        throw new IllegalStateException("not done: " + outcome);
    }
}
// end::example[]
