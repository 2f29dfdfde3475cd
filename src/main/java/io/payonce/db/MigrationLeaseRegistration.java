package io.payonce.db;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.AgroalConnectionFactoryConfiguration;
import io.agroal.api.security.AgroalSecurityProvider;
import io.quarkus.flyway.FlywayConfigurationCustomizer;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.configuration.FluentConfiguration;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Adds {@link MigrationLease} to the callbacks of the Flyway that migrates at start, with connections
 * of its own to the database Flyway migrates, and gives the lease back as the application shuts
 * down, should a failed start have left it held. Quarkus calls this on its start thread, and shuts
 * the application down on that thread once Flyway has returned, even when asked to stop meanwhile.
 */
@Singleton
public class MigrationLeaseRegistration implements FlywayConfigurationCustomizer {

    private static final Driver DRIVER = new org.mariadb.jdbc.Driver();

    private final List<MigrationLease> leases = new ArrayList<>();

    @Override
    public void customize(FluentConfiguration configuration) {
        MigrationLease lease = new MigrationLease(connectionsTo(configuration.getDataSource()));
        leases.add(lease);
        List<Callback> callbacks = new ArrayList<>(List.of(configuration.getCallbacks()));
        callbacks.add(lease);
        configuration.callbacks(callbacks.toArray(Callback[]::new));
    }

    @PreDestroy
    void releaseLeases() {
        leases.forEach(MigrationLease::release);
    }

    /**
     * Flyway's data source is the datasource's pool, which Quarkus closes before this bean when a start
     * fails: the lease's connections are then opened by the driver as that pool opens its own. A data
     * source of Flyway's own (quarkus.flyway.jdbc-url or username) opens one per call, and stays open.
     */
    private static MigrationLease.Connections connectionsTo(DataSource flyways) {
        if (!(flyways instanceof AgroalDataSource pool)) {
            return flyways::getConnection;
        }
        AgroalConnectionFactoryConfiguration factory = pool.getConfiguration().connectionPoolConfiguration().connectionFactoryConfiguration();
        Properties properties = connectionProperties(factory);
        return () -> {
            Connection connection = DRIVER.connect(factory.jdbcUrl(), properties);
            if (connection == null) {
                throw new SQLException("The MariaDB driver does not take the datasource's URL " + factory.jdbcUrl());
            }
            return connection;
        };
    }

    /**
     * What Agroal hands the driver for each of the pool's connections: the datasource's JDBC properties
     * (TLS among them), then the user and password as its security providers turn them into properties;
     * bounded unless they say otherwise, so that no lease statement waits on a node that stopped answering.
     */
    private static Properties connectionProperties(AgroalConnectionFactoryConfiguration factory) {
        Properties properties = new Properties();
        properties.putAll(factory.jdbcProperties());
        addSecurityProperties(properties, factory, factory.principal());
        for (Object credential : factory.credentials()) {
            addSecurityProperties(properties, factory, credential);
        }
        properties.putIfAbsent("connectTimeout", "5000");
        properties.putIfAbsent("socketTimeout", "30000");
        return properties;
    }

    private static void addSecurityProperties(Properties properties, AgroalConnectionFactoryConfiguration factory, Object securityObject) {
        if (securityObject == null) {
            return;
        }
        for (AgroalSecurityProvider provider : factory.securityProviders()) {
            Properties provided = provider.getSecurityProperties(securityObject);
            if (provided != null) {
                properties.putAll(provided);
                return;
            }
        }
    }
}
