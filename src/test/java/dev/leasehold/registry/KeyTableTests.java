package dev.leasehold.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import dev.leasehold.testing.support.Seeds;

/** The lane key table against a HashMap model: seeded random puts, removes and lookups. */
class KeyTableTests {

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static KeyState state(String key) {
        byte[] b = bytes(key);
        return new KeyState(b, KeyTable.hash(b));
    }

    @Test
    void behavesLikeAMapUnderRandomOperations() {
        long seed = Seeds.seed("KeyTableTests");
        Random random = new Random(seed);
        KeyTable table = new KeyTable();
        Map<String, KeyState> model = new HashMap<>();
        for (int step = 0; step < 200_000; step++) {
            // A small key space forces long probe runs, wrap-around and many backward shifts.
            String key = "k" + random.nextInt(random.nextBoolean() ? 64 : 5000);
            byte[] b = bytes(key);
            switch (random.nextInt(4)) {
                case 0, 1 -> {
                    KeyState s = state(key);
                    table.putIfAbsent(s);
                    model.putIfAbsent(key, s);
                }
                case 2 -> {
                    KeyState s = model.remove(key);
                    if (s != null) {
                        table.remove(s);
                    } else {
                        table.remove(state(key)); // an absent state: no effect
                    }
                }
                default -> assertThat(table.get(b, KeyTable.hash(b))).as("seed %d step %d", seed, step)
                        .isSameAs(model.get(key));
            }
            assertThat(table.size()).as("seed %d step %d", seed, step).isEqualTo(model.size());
        }
        for (Map.Entry<String, KeyState> e : model.entrySet()) {
            byte[] b = bytes(e.getKey());
            assertThat(table.get(b, KeyTable.hash(b))).isSameAs(e.getValue());
            assertThat(table.contains(e.getValue())).isTrue();
        }
        assertThat(new HashSet<>(table.snapshot())).isEqualTo(new HashSet<>(model.values()));
    }

    @Test
    void removeIsByIdentityAndPutKeepsTheFirstState() {
        KeyTable table = new KeyTable();
        KeyState first = state("orders/42");
        KeyState twin = state("orders/42");
        table.putIfAbsent(first);
        table.putIfAbsent(twin);
        assertThat(table.size()).isEqualTo(1);
        assertThat(table.contains(twin)).isFalse();
        table.remove(twin);
        assertThat(table.contains(first)).isTrue();
        table.remove(first);
        assertThat(table.size()).isZero();
        assertThat(table.get(first.key, first.hash)).isNull();
    }

    @Test
    void growsAndKeepsEveryKey() {
        KeyTable table = new KeyTable();
        List<KeyState> all = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            KeyState s = state("job-" + i);
            all.add(s);
            table.putIfAbsent(s);
        }
        assertThat(table.size()).isEqualTo(100_000);
        for (KeyState s : all) {
            assertThat(table.get(s.key, s.hash)).isSameAs(s);
        }
        for (int i = 0; i < all.size(); i += 2) {
            table.remove(all.get(i));
        }
        for (int i = 0; i < all.size(); i++) {
            KeyState s = all.get(i);
            assertThat(table.get(s.key, s.hash)).isSameAs(i % 2 == 0 ? null : s);
        }
    }
}
