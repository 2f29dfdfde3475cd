package io.payonce.input;

import jakarta.validation.Constraint;
import jakarta.validation.Payload;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** An amount in minor units no larger than {@code payonce.max-amount}. */
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = MaxAmountValidator.class)
public @interface MaxAmount {

    /** The setting that bounds amounts. */
    String SETTING = "payonce.max-amount";

    /**
     * The schema extension that marks an amount in the API document, naming {@link #SETTING}; the
     * document's filter writes the configured value as its maximum (io.payonce.api.ConfiguredMaximum).
     */
    String DOCUMENTED_BY = "x-maximum-setting";

    String message() default "must not exceed the maximum amount";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
