package io.payonce.input;

import io.payonce.config.PayonceConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Provider;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;

@ApplicationScoped
public class MaxAmountValidator implements ConstraintValidator<MaxAmount, Long> {

    /** Looked up per call: validators are built during static init, before config mappings exist. */
    private final Provider<PayonceConfig> config;

    public MaxAmountValidator(Provider<PayonceConfig> config) {
        this.config = config;
    }

    @Override
    public boolean isValid(Long amount, ConstraintValidatorContext context) {
        return amount == null || amount <= config.get().maxAmount();
    }
}
