package dev.leasehold.store;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.protocol.TokenFloorSnapshot;
import dev.leasehold.settings.SettingException;

/**
 * Restore from a token-floor snapshot ({@code leasehold.restore-from}, docs/cluster.md "Backup and
 * restore of the token floor"): on a new data directory, the node's tokens start above the
 * snapshot's floor plus a margin (the token block size) that covers tokens issued after the
 * snapshot was taken.
 *
 * <h2>Where the floor lives</h2>
 * The restored floor is written, fsync'd, to {@code restored-token-floor} in the data directory
 * before anything else is, and read at every start: a single node reserves its tokens above it,
 * a cluster node serves as leader above it (as {@code leasehold.cluster.initial-token}), so the
 * floor holds even when the node restarts before it issued a token. The setting may stay in place
 * after the first start: the same snapshot on a data directory restored from it is accepted.
 *
 * <h2>What is refused, at start-up, naming the setting</h2>
 * A file that is not a snapshot, or truncated, or whose checksum does not match; a data directory
 * that holds state (a single node's {@code tokens} or lease horizon, Raft storage, or a floor
 * restored from another snapshot): a restore never lowers or mixes with what a node has.
 */
public final class TokenFloorRestore {

    private static final Logger LOG = LoggerFactory.getLogger(TokenFloorRestore.class);
    /** The file, in the data directory, that holds the restored floor. */
    public static final String FILE = "restored-token-floor";
    private static final String PROPERTY = "leasehold.restore-from";

    private TokenFloorRestore() {
    }

    /**
     * The restored floor in force on this node's data directory: no token at or below it is
     * issued; 0 when the directory was never restored.
     */
    public record Floor(long value) {
    }

    /**
     * Applies {@code restoreFrom} (null: not set) to {@code dataDir} and returns the restored floor
     * in force there: no token at or below it may be issued (0 when the directory was never restored).
     *
     * @param margin added to the snapshot's floor (the token block size)
     * @throws SettingException naming {@code leasehold.restore-from} when the snapshot or the directory is refused
     * @throws DataDirectoryException when the floor file cannot be read or written
     */
    public static long apply(Path dataDir, Path restoreFrom, long margin) {
        Path file = dataDir.resolve(FILE);
        DurableValue value = DurableFiles.REAL.open(file, "restored token floor");
        long inForce;
        try {
            inForce = Files.exists(file) ? value.read().orElse(0L) : 0L;
        } catch (IOException e) {
            throw DataDirectory.openFailure(file, "read the restored token floor", e);
        }
        if (restoreFrom == null) {
            return inForce;
        }
        TokenFloorSnapshot snapshot = read(restoreFrom);
        long floor = Math.addExact(snapshot.tokenFloor(), margin);
        if (inForce == floor) {
            LOG.info("{}={}: this data directory was restored from it before (token floor {}); starting on it",
                    PROPERTY, restoreFrom, floor);
            return inForce;
        }
        String state = state(dataDir, inForce);
        if (state != null) {
            throw new SettingException(PROPERTY, restoreFrom, "refused: the data directory " + dataDir + " holds "
                    + state + ". A snapshot is restored only onto a new, empty data directory (a node that has state "
                    + "keeps its own tokens); remove the setting to start on this directory, or point "
                    + "leasehold.data-dir at an empty one");
        }
        try {
            value.write(floor);
        } catch (IOException e) {
            throw DataDirectory.openFailure(file, "write the restored token floor", e);
        }
        LOG.warn("Restored from {} ({} snapshot taken {} on {} at term {} index {}, roster {}): token floor {} + "
                + "margin {} = {}; the first token issued here is above {}", restoreFrom, snapshot.mode(),
                snapshot.takenAt(), snapshot.node(), snapshot.term(), snapshot.index(), snapshot.roster(),
                snapshot.tokenFloor(), margin, floor, floor);
        return floor;
    }

    /** Reads and verifies a snapshot file, refusing it with what is wrong. */
    static TokenFloorSnapshot read(Path restoreFrom) {
        String text;
        try {
            text = Files.readString(restoreFrom, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new SettingException(PROPERTY, restoreFrom, "cannot read the snapshot: " + e, e);
        }
        try {
            return TokenFloorSnapshot.decode(text);
        } catch (IllegalArgumentException e) {
            throw new SettingException(PROPERTY, restoreFrom, "refused, the snapshot does not verify: "
                    + e.getMessage() + ". Nothing was changed; restore from an intact snapshot", e);
        }
    }

    /** What state {@code dataDir} holds, or null when it holds none. */
    private static String state(Path dataDir, long inForce) {
        if (inForce != 0) {
            return "a token floor restored from another snapshot (" + inForce + ")";
        }
        if (DataDirectory.holdsState(dataDir)) {
            return "a single node's state (tokens or lease horizon)";
        }
        Path raft = dataDir.resolve("raft");
        if (Files.isDirectory(raft)) {
            try (Stream<Path> s = Files.list(raft)) {
                if (s.findAny().isPresent()) {
                    return "Raft storage (" + raft + ")";
                }
            } catch (IOException e) {
                throw DataDirectory.openFailure(raft, "list the Raft storage", e);
            }
        }
        return null;
    }
}
