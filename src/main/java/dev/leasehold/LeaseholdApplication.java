package dev.leasehold;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The Leasehold lock server. Wiring lives in {@code dev.leasehold.config}. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class LeaseholdApplication {

    public static void main(String[] args) {
        SpringApplication.run(LeaseholdApplication.class, args);
    }
}
