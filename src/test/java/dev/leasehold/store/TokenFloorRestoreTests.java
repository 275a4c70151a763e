package dev.leasehold.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.protocol.TokenFloorSnapshot;
import dev.leasehold.settings.SettingException;

/** leasehold.restore-from on real files: the floor plus the margin, kept; what is refused and why. */
class TokenFloorRestoreTests {

    @TempDir
    Path dir;

    private Path snapshot(long floor) throws Exception {
        Path f = dir.resolve("snap-" + floor);
        Files.writeString(f, new TokenFloorSnapshot("cluster", "n1", Instant.EPOCH, 2, 40, floor, List.of("n1"))
                .encode());
        return f;
    }

    private Path data() throws Exception {
        return Files.createDirectories(dir.resolve("data"));
    }

    @Test
    void aNewDirectoryStartsAboveTheFloorPlusTheMarginAndKeepsIt() throws Exception {
        Path data = data();
        assertThat(TokenFloorRestore.apply(data, null, 1000)).as("never restored").isZero();
        Path s = snapshot(5_000);
        assertThat(TokenFloorRestore.apply(data, s, 1000)).isEqualTo(6_000);
        assertThat(TokenFloorRestore.apply(data, null, 1000)).as("kept without the setting").isEqualTo(6_000);
        assertThat(TokenFloorRestore.apply(data, s, 1000)).as("the same snapshot again: accepted").isEqualTo(6_000);
        try (ReservedTokens tokens = ReservedTokens.open(DurableFiles.REAL.open(data.resolve("tokens"), "tokens"),
                1000, 6_000)) {
            assertThat(tokens.next()).isEqualTo(6_001);
        }
    }

    @Test
    void aDirectoryWithStateOrAnotherRestoreIsRefused() throws Exception {
        Path data = data();
        TokenFloorRestore.apply(data, snapshot(5_000), 1000);
        assertThatThrownBy(() -> TokenFloorRestore.apply(data, snapshot(7_000), 1000))
                .isInstanceOf(SettingException.class).hasMessageContaining("leasehold.restore-from")
                .hasMessageContaining("restored from another snapshot");

        Path single = Files.createDirectories(dir.resolve("single"));
        Files.writeString(single.resolve("tokens"), "1");
        assertThatThrownBy(() -> TokenFloorRestore.apply(single, snapshot(5_000), 1000))
                .hasMessageContaining("holds a single node's state").hasMessageContaining("empty data directory");

        Path raft = Files.createDirectories(dir.resolve("raft-node").resolve("raft").resolve("group"));
        assertThatThrownBy(() -> TokenFloorRestore.apply(raft.getParent().getParent(), snapshot(5_000), 1000))
                .hasMessageContaining("Raft storage");
    }

    @Test
    void aCorruptOrTruncatedSnapshotIsRefusedAndNothingIsWritten() throws Exception {
        Path data = data();
        Path s = snapshot(5_000);
        Path corrupt = dir.resolve("corrupt");
        Files.writeString(corrupt, Files.readString(s).replace("5000", "9000"));
        assertThatThrownBy(() -> TokenFloorRestore.apply(data, corrupt, 1000)).isInstanceOf(SettingException.class)
                .hasMessageContaining("does not verify").hasMessageContaining("corrupt");
        Path truncated = dir.resolve("truncated");
        String text = Files.readString(s);
        Files.writeString(truncated, text.substring(0, text.length() / 2));
        assertThatThrownBy(() -> TokenFloorRestore.apply(data, truncated, 1000)).hasMessageContaining("truncated");
        assertThatThrownBy(() -> TokenFloorRestore.apply(data, dir.resolve("missing"), 1000))
                .hasMessageContaining("cannot read");
        assertThat(data.resolve(TokenFloorRestore.FILE)).doesNotExist();
    }
}
