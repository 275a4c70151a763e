package dev.leasehold.config;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.leasehold.store.DataDirectoryException;

/**
 * Turns a data-directory failure at start-up into Spring Boot's short "APPLICATION FAILED TO
 * START" report (path, problem, what to do) instead of a page of bean-creation stack trace.
 */
public class DataDirectoryFailureAnalyzer extends AbstractFailureAnalyzer<DataDirectoryException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DataDirectoryException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
    }
}
