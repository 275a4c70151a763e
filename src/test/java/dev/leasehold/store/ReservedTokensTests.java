package dev.leasehold.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.registry.TokenSource;
import dev.leasehold.testing.FailingDisk;
import dev.leasehold.testing.support.Wait;

/** Fencing tokens: strictly increasing across restarts, Busy (NONE) instead of unpersisted tokens. */
class ReservedTokensTests {

    @TempDir
    Path dir;
    final FailingDisk disk = new FailingDisk();

    ReservedTokens open(long block) throws IOException {
        return ReservedTokens.open(disk.open(dir.resolve("tokens"), "tokens"), block);
    }

    @Test
    void tokensStartAt1AndARestartAfterACrashSkipsTheRestOfTheReservedBlock() throws IOException {
        ReservedTokens crashed = open(10);
        assertThat(crashed.next()).isEqualTo(1);
        for (int i = 0; i < 3; i++) {
            crashed.next();
        }
        long last = crashed.lastIssued();
        // like kill -9: close() never runs, the mark stays at the reserved 10
        try (ReservedTokens tokens = open(10)) {
            assertThat(tokens.next()).isGreaterThan(last).isEqualTo(11);
        }
        crashed.close(); // only to stop its thread; the test is over for it
    }

    @Test
    void aGracefulStopGivesTheRestOfTheBlockBackSoTheNextRunContinuesAtTheNextToken() throws IOException {
        try (ReservedTokens tokens = open(1_000_000)) {
            for (int i = 0; i < 7; i++) {
                tokens.next();
            }
        }
        for (int restart = 0; restart < 3; restart++) {
            try (ReservedTokens tokens = open(1_000_000)) {
                assertThat(tokens.next()).as("restart %d", restart).isEqualTo(8 + restart);
            }
        }
    }

    @Test
    void aStartThatFailsLaterReservesNothing() throws IOException {
        try (ReservedTokens tokens = open(1_000_000)) {
            tokens.next(); // token 1
        }
        open(1_000_000).close(); // a start that failed on a busy port: the context closes its beans
        try (ReservedTokens tokens = open(1_000_000)) {
            assertThat(tokens.next()).isEqualTo(2);
        }
    }

    @Test
    void afterCloseNoTokenIsIssuedAboveTheMarkWrittenDown() throws IOException {
        ReservedTokens tokens = open(10);
        tokens.next();
        tokens.close();
        assertThat(tokens.next()).isEqualTo(TokenSource.NONE);
        assertThat(tokens.lastIssued()).isEqualTo(1);
        try (ReservedTokens next = open(10)) {
            assertThat(next.next()).isEqualTo(2);
        }
    }

    @Test
    void aFailingDiskGivesNoneOnceTheReservedTokensAreUsedAndRecoversWithoutTraffic() throws IOException {
        try (ReservedTokens tokens = open(4)) {
            disk.failing.set(true);
            long issued = 0;
            for (int i = 0; i < 10; i++) {
                long t = tokens.next();
                if (t != TokenSource.NONE) {
                    assertThat(t).isLessThanOrEqualTo(tokens.reservedUpTo()); // only persisted tokens
                    issued++;
                }
            }
            assertThat(issued).as("exactly the block already on disk").isEqualTo(4);
            // 20 s, was 5 s here and below: the store's writer thread meets the failure, then retries once a second.
            Wait.until("the token store to report the failing disk", Duration.ofSeconds(20), tokens::problem, Optional::isPresent);
            assertThat(tokens.problem().get()).contains(dir.resolve("tokens").toString())
                    .contains("No space left on device");
            // The disk comes back; no Acquire arrives, the store thread retries on its own.
            disk.failing.set(false);
            Wait.until("the token store's problem to clear (no Acquire: it retries on its own)", Duration.ofSeconds(20), tokens::problem,
                    Optional::isEmpty);
            assertThat(tokens.next()).isEqualTo(5);
        }
    }

    @Test
    void aCorruptTokenFileFailsStartUpNamingIt() throws IOException {
        Files.writeString(dir.resolve("tokens"), "leasehold-tokens v1\n42\nbadcrc\n");
        assertThatThrownBy(() -> open(10)).isInstanceOf(CorruptStateException.class)
                .hasMessageContaining(dir.resolve("tokens").toString()).hasMessageContaining("checksum mismatch");
    }
}
