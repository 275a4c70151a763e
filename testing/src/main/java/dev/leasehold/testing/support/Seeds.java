package dev.leasehold.testing.support;

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
        System.out.println(test + " seed " + seed + " (rerun: " + rerun(test.replaceAll("[.#].*", "")) + " -D" + PROPERTY + "=" + seed + ")");
        return seed;
    }

    /** The command that runs one test class alone: the suffix picks the runner (docs/testing.md). */
    static String rerun(String testClass) {
        return testClass.endsWith("IntegrationTests")
                ? "./mvnw verify -Dit.test=" + testClass + " -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false"
                : "./mvnw test -Dtest=" + testClass;
    }
}
