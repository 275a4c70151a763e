package dev.leasehold.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The "did you mean" both failure analyzers print: near names are found in any relaxed form, far ones are not guessed. */
class NearestSettingTests {

    private static final List<String> SERVER = List.of("leasehold.port", "leasehold.max-waiters-per-key",
            "leasehold.max-waiters-total", "leasehold.tls.client-auth", "leasehold.cluster.max-batch");

    @Test
    void aTypoInAnyRelaxedFormFindsTheSetting() {
        for (String typo : List.of("leasehold.max-waiter-per-key", "leasehold.MAX_WAITER_PER_KEY",
                "leasehold.maxWaiterPerKey", "leasehold.max-waiters-per-key[0]")) {
            assertThat(NearestSetting.nearest("leasehold", typo, SERVER)).as(typo)
                    .isEqualTo("leasehold.max-waiters-per-key");
        }
        assertThat(NearestSetting.nearest("leasehold", "leasehold.tls.client-auht", SERVER))
                .isEqualTo("leasehold.tls.client-auth");
        assertThat(NearestSetting.nearest("leasehold.client", "leasehold.client.pool-sise",
                List.of("leasehold.client.servers", "leasehold.client.pool-size"))).isEqualTo("leasehold.client.pool-size");
    }

    @Test
    void nothingNearIsNoGuess() {
        assertThat(NearestSetting.nearest("leasehold", "leasehold.bogus", SERVER)).isNull();
        assertThat(NearestSetting.nearest("leasehold", "leasehold.x", List.of())).isNull();
    }

    @Test
    void distanceIsLevenshtein() {
        assertThat(NearestSetting.distance("kitten", "sitting")).isEqualTo(3);
        assertThat(NearestSetting.distance("", "abc")).isEqualTo(3);
        assertThat(NearestSetting.distance("same", "same")).isZero();
    }
}
