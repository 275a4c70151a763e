package dev.leasehold.testing;

/**
 * The seed of a randomized test: {@code -Dleasehold.seed=N} if given (to repeat a run), else a
 * fresh one. Either way it is printed with the line that repeats the run, so a failure in CI can
 * be rerun exactly. One property for every randomized test.
 */
public final class Seeds {

    /** The system property that fixes the seed of every randomized test. */
    public static final String PROPERTY = "leasehold.seed";

    private Seeds() {
    }

    /** The seed for {@code test} (a name for the log line). */
    public static long seed(String test) {
        long seed = Long.getLong(PROPERTY, System.nanoTime());
        System.out.println(test + " seed " + seed + " (rerun: ./mvnw test -Dtest=" + test.replaceAll("[.#].*", "")
                + " -D" + PROPERTY + "=" + seed + ")");
        return seed;
    }
}
