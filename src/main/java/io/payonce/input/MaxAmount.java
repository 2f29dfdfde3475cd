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

    String message() default "must not exceed the maximum amount";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};
}
