package io.payonce.api;

import io.payonce.config.PayonceConfig;
import io.payonce.input.MaxAmount;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import io.smallrye.config.WithDefault;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.media.Schema;

import java.math.BigDecimal;

/**
 * States the configured maximum on every amount a client sends: {@code payonce.max-amount} is a
 * setting of the deployment, so an annotation cannot carry it. The amounts are marked with the
 * extension {@value MaxAmount#DOCUMENTED_BY}, naming the setting; this filter writes its value as
 * their {@code maximum} when the document is built (into target/openapi) and again when the
 * service starts, so that the document a running instance serves shows that instance's maximum.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BOTH)
public class ConfiguredMaximum implements OASFilter {

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        if (openAPI.getComponents() == null || openAPI.getComponents().getSchemas() == null) {
            return;
        }
        BigDecimal maximum = BigDecimal.valueOf(maxAmount());
        openAPI.getComponents().getSchemas().values().forEach(schema -> {
            if (schema.getProperties() != null) {
                schema.getProperties().values().stream().filter(ConfiguredMaximum::isAmount).forEach(amount -> amount.setMaximum(maximum));
            }
        });
    }

    private static boolean isAmount(Schema property) {
        return property.getExtensions() != null && property.getExtensions().containsKey(MaxAmount.DOCUMENTED_BY);
    }

    /**
     * The setting, or, where it is not set, its default as {@link PayonceConfig} declares it: while
     * the document is built, the configuration holds what is set but not the mapping's defaults.
     */
    private static long maxAmount() {
        return ConfigProvider.getConfig().getOptionalValue(MaxAmount.SETTING, Long.class).orElseGet(() -> {
            try {
                return Long.parseLong(PayonceConfig.class.getMethod("maxAmount").getAnnotation(WithDefault.class).value());
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException("PayonceConfig declares maxAmount", e);
            }
        });
    }
}
