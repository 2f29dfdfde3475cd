package io.payonce.redis;

import io.payonce.support.Await;
import io.payonce.support.FreePorts;
import io.payonce.support.PackagedInstance;
import io.restassured.RestAssured;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged application started while Redis is away: it starts and serves (payonce pays without
 * Redis), and says so once, at WARN, naming Redis's address and the settings that name it. Each
 * health check pings Redis again, and a Redis that stays away is not told again.
 */
class RedisAwayAtStartIT {

    private static final String DATABASE = "payonce_redis_away";

    @Test
    void aStartWithoutRedisSaysSoOnceAtWarn() throws Exception {
        int away = FreePorts.next();
        String line = "Redis at 127.0.0.1:" + away + " does not answer: pays go on without the pay lock, and order forms answer 503, "
                + "until it does; check PAYONCE_REDIS_HOST and PAYONCE_REDIS_PORT";
        try (PackagedInstance instance = PackagedInstance.start("redis-away", DATABASE, true, Map.of("PAYONCE_REDIS_PORT", Integer.toString(away)))) {
            Await.until(() -> instance.linesContaining(line) >= 1, Duration.ofSeconds(15), "the start telling Redis is away");
            for (int check = 0; check < 3; check++) {
                assertEquals(503, RestAssured.given().port(instance.managementPort()).get("/q/health").statusCode(), "Redis is down in /q/health");
            }

            String log = Files.readString(instance.log());
            assertEquals(1, instance.linesContaining(line), "told once:\n" + log);
            assertTrue(log.lines().anyMatch(each -> each.contains(line) && each.contains(" WARN ")), "at WARN:\n" + log);
            assertEquals(200, RestAssured.given().port(instance.managementPort()).get("/q/health/ready").statusCode(), "ready without Redis");
        }
    }
}
