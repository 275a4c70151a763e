package dev.leasehold.server;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.leasehold.protocol.Answer;

/**
 * The reference model of one key for {@link Protocol14ModelIntegrationTests}, driven only by the
 * answers the server gave: who holds the key (an exclusive token and its value, or shared
 * tokens), the highest token granted on it, and every value each exclusive grant was shown with.
 * Leases are 30 s and the run is shorter, lock-delay is off: a grant ends only by a Release the
 * test saw answered {@code R}, so the model is exact once every answer has been read.
 */
final class Protocol14KeyModel {

    final String name;
    final byte[] bytes;
    final boolean exclusiveUse;
    final boolean sharedUse;
    /** The shared limit every shared {@code M} on this key carries (0: read lock). */
    final int limit;
    /** Shared slots the key may have at once: the limit, or the server's read-lock maximum. */
    final int capacity;

    long exclusive;
    byte[] value = new byte[0];
    final TreeSet<Long> shared = new TreeSet<>();
    long highestToken;
    /** Every exclusive grant made on this key, with the values it held in the order they were set. */
    final Map<Long, List<byte[]>> valuesOf = new HashMap<>();
    final Set<Long> sharedTokens = new HashSet<>();

    Protocol14KeyModel(String name, boolean exclusiveUse, boolean sharedUse, int limit) {
        this.name = name;
        this.bytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        this.exclusiveUse = exclusiveUse;
        this.sharedUse = sharedUse;
        this.limit = limit;
        this.capacity = limit == 0 ? 1024 : limit;
    }

    /**
     * A grant the server answered {@code A}: null if it agrees with what the model knows, else why
     * not (6.1 as restated in 13.4: a grant the model still sees active, never released, rules it out).
     */
    String grant(long token, boolean isShared, byte[] grantValue) {
        String problem = null;
        if (exclusive != 0) {
            problem = "granted " + token + " while exclusive " + exclusive + " is active";
        } else if (!isShared && !shared.isEmpty()) {
            problem = "granted exclusive " + token + " while shared " + shared + " are active";
        } else if (isShared && shared.size() >= capacity) {
            problem = "granted shared " + token + " beyond the limit: " + shared;
        }
        highestToken = Math.max(highestToken, token);
        if (isShared) {
            shared.add(token);
            sharedTokens.add(token);
        } else {
            exclusive = token;
            value = grantValue;
            valuesOf.computeIfAbsent(token, t -> new ArrayList<>()).add(grantValue);
        }
        return problem;
    }

    void release(long token) {
        if (token == exclusive) {
            exclusive = 0;
            value = new byte[0];
        } else {
            shared.remove(token);
        }
    }

    void valueSet(long token, byte[] newValue) {
        value = newValue;
        valuesOf.get(token).add(newValue);
    }

    /** The five things an event shows (16.2), as one comparable string. */
    static String shown(int state, long token, int count, int limit, byte[] value) {
        return (char) state + " token=" + token + " count=" + count + " limit=" + limit + " value="
                + HexFormat.of().formatHex(value);
    }

    static String shown(Answer.Event e) {
        return shown(e.state(), e.token(), e.count(), e.limit(), e.value());
    }

    /**
     * What a watch's last event must show once the key is quiet (16.2): the holder and its value,
     * the shared slots with the highest token, or free with the highest token granted (every key
     * keeps a watch for the whole run, so the server never forgets it).
     */
    String expectedShown() {
        if (exclusive != 0) {
            return shown('H', exclusive, 1, 0, value);
        }
        if (!shared.isEmpty()) {
            return shown('S', highestToken, shared.size(), limit, new byte[0]);
        }
        return shown('F', highestToken, 0, 0, new byte[0]);
    }
}
