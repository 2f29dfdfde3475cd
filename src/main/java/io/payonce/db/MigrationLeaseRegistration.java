package io.payonce.db;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.AgroalConnectionFactoryConfiguration;
import io.agroal.api.security.AgroalSecurityProvider;
import io.quarkus.flyway.FlywayConfigurationCustomizer;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.configuration.FluentConfiguration;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Adds {@link MigrationLease} to the callbacks of the Flyway that migrates at start, with what its
 * connection of its own needs to reach the database as Flyway's pool does, and gives the lease back
 * as the application shuts down, should a failed start have left it held.
 */
@Singleton
public class MigrationLeaseRegistration implements FlywayConfigurationCustomizer {

    private final AgroalConnectionFactoryConfiguration pool;
    private final List<MigrationLease> leases = new ArrayList<>();

    MigrationLeaseRegistration(AgroalDataSource dataSource) {
        this.pool = dataSource.getConfiguration().connectionPoolConfiguration().connectionFactoryConfiguration();
    }

    @Override
    public void customize(FluentConfiguration configuration) {
        MigrationLease lease = new MigrationLease(pool.jdbcUrl(), connectionProperties());
        synchronized (leases) {
            leases.add(lease);
        }
        List<Callback> callbacks = new ArrayList<>(List.of(configuration.getCallbacks()));
        callbacks.add(lease);
        configuration.callbacks(callbacks.toArray(Callback[]::new));
    }

    @PreDestroy
    void releaseLeases() {
        synchronized (leases) {
            leases.forEach(MigrationLease::releaseAtShutdown);
        }
    }

    /**
     * What Agroal hands the driver for each of the pool's connections: the datasource's JDBC properties
     * (TLS among them), then the user and password as its security providers turn them into properties.
     */
    private Properties connectionProperties() {
        Properties properties = new Properties();
        properties.putAll(pool.jdbcProperties());
        addSecurityProperties(properties, pool.principal());
        for (Object credential : pool.credentials()) {
            addSecurityProperties(properties, credential);
        }
        return properties;
    }

    private void addSecurityProperties(Properties properties, Object securityObject) {
        if (securityObject == null) {
            return;
        }
        for (AgroalSecurityProvider provider : pool.securityProviders()) {
            Properties provided = provider.getSecurityProperties(securityObject);
            if (provided != null) {
                properties.putAll(provided);
                return;
            }
        }
    }
}
