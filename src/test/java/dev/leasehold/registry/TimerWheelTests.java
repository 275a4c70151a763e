package dev.leasehold.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import dev.leasehold.testing.support.Seeds;

class TimerWheelTests {

    static final class Node extends TimerNode {
    }

    @Test
    void firesNoEarlierThanTheDeadlineAndWithinOneTick() {
        long seed = Seeds.seed("TimerWheelTests");
        Random random = new Random(seed);
        long tick = 5_000_000;
        long now = -123_456_789L; // nanoTime may be negative
        TimerWheel wheel = new TimerWheel(tick, now);
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            Node n = new Node();
            wheel.schedule(n, now + (long) (random.nextDouble() * 300e9)); // up to 300 s: several wheel turns
            nodes.add(n);
        }
        List<Node> cancelled = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            Node n = nodes.get(random.nextInt(nodes.size()));
            wheel.cancel(n);
            cancelled.add(n);
        }
        List<Node> fired = new ArrayList<>();
        while (wheel.size() > 0) {
            now += 1 + random.nextInt(20_000_000);
            long at = now;
            wheel.advance(now, node -> {
                assertThat(at).as("seed %d never early", seed).isGreaterThanOrEqualTo(node.deadline);
                assertThat(at - node.deadline).as("seed %d late by at most a tick plus a step", seed)
                        .isLessThan(tick + 20_000_000);
                fired.add((Node) node);
            });
        }
        assertThat(fired).doesNotContainAnyElementsOf(cancelled);
        assertThat(fired.size() + cancelled.stream().distinct().count()).isEqualTo(nodes.size());
    }

    @Test
    void callbackMayRescheduleTheNodeItWasGiven() {
        TimerWheel wheel = new TimerWheel(1000, 0);
        Node n = new Node();
        wheel.schedule(n, 5000);
        int[] fired = {0};
        wheel.advance(5000, node -> {
            fired[0]++;
            wheel.schedule(node, 9000);
        });
        assertThat(fired[0]).isEqualTo(1);
        assertThat(wheel.size()).isEqualTo(1);
        wheel.advance(8999, node -> fired[0]++);
        assertThat(fired[0]).isEqualTo(1);
        wheel.advance(9000, node -> fired[0]++);
        assertThat(fired[0]).isEqualTo(2);
    }

    @Test
    void callbackMayCancelOrRescheduleOtherNodesDueInTheSamePass() {
        TimerWheel wheel = new TimerWheel(1000, 0);
        Node a = new Node();
        Node b = new Node();
        Node c = new Node();
        wheel.schedule(a, 5000);
        wheel.schedule(b, 5000);
        wheel.schedule(c, 5000);
        List<TimerNode> fired = new ArrayList<>();
        wheel.advance(5000, node -> {
            fired.add(node);
            if (fired.size() == 1) {
                // the first one fired cancels one sibling and pushes the other far out
                TimerNode[] others = java.util.stream.Stream.of(a, b, c).filter(n -> n != node).toArray(TimerNode[]::new);
                wheel.cancel(others[0]);
                wheel.schedule(others[1], 5000 + 4096L * 1000); // same slot, one turn later
            }
        });
        assertThat(fired).hasSize(1);
        assertThat(wheel.size()).isEqualTo(1);
        wheel.advance(5000 + 4096L * 1000 - 1, fired::add);
        assertThat(fired).hasSize(1);
        wheel.advance(5000 + 4096L * 1000, fired::add);
        assertThat(fired).hasSize(2);
        assertThat(wheel.size()).isZero();
    }
}
