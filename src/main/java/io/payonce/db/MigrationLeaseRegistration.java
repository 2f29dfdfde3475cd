package io.payonce.db;

import io.quarkus.flyway.FlywayConfigurationCustomizer;
import jakarta.inject.Singleton;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.configuration.FluentConfiguration;

import java.util.ArrayList;
import java.util.List;

/** Adds {@link MigrationLease} to the callbacks of the Flyway that migrates at start. */
@Singleton
public class MigrationLeaseRegistration implements FlywayConfigurationCustomizer {

    @Override
    public void customize(FluentConfiguration configuration) {
        List<Callback> callbacks = new ArrayList<>(List.of(configuration.getCallbacks()));
        callbacks.add(new MigrationLease());
        configuration.callbacks(callbacks.toArray(Callback[]::new));
    }
}
