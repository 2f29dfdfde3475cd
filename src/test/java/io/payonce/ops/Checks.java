package io.payonce.ops;

import io.restassured.response.Response;

final class Checks {

    static final String REDIS = "Redis (pay lock and submit tokens)";

    private Checks() {
    }

    /** The status of one named check in a SmallRye Health answer. */
    static String status(Response health, String checkName) {
        return health.jsonPath().getString("checks.find { it.name == '" + checkName + "' }.status");
    }
}
