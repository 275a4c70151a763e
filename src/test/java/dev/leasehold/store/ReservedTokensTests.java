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
    void tokensStartAt1AndARestartSkipsTheRestOfTheReservedBlock() throws IOException {
        long last;
        try (ReservedTokens tokens = open(10)) {
            assertThat(tokens.next()).isEqualTo(1);
            for (int i = 0; i < 3; i++) {
                tokens.next();
            }
            last = tokens.lastIssued();
        } // like kill -9: nothing is written at close
        try (ReservedTokens tokens = open(10)) {
            assertThat(tokens.next()).isGreaterThan(last).isEqualTo(11);
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
