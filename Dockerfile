# syntax=docker/dockerfile:1
#
# Leasehold container image.
#   docker build -t leasehold:dev .
#   docker run --rm -p 7420:7420 -p 7421:7421 -v leasehold-data:/data leasehold:dev
#
# Stage 1 builds the Spring Boot fat jar with the Maven wrapper and extracts it (Spring Boot's
# CDS-friendly layout: leasehold.jar plus lib/); stage 2 runs it on a JRE, from an AppCDS archive
# that a training run in stage 2 makes (bin/leasehold-cds; docs/deploy.md, "Start time"): Java 17
# accepts an archive only from the same JVM and the same jars at the same paths, so it is made
# where it runs. Tests are not run here: CI runs them with `./mvnw -B verify` (see .ci/run).

FROM eclipse-temurin:17-jdk AS build
WORKDIR /src

# The build is a reactor (pom.xml): the server (server-pom.xml, src/) needs the client module
# (client/, which holds the shared protocol), and Maven reads every module's POM (spring/).
COPY mvnw pom.xml server-pom.xml ./
COPY .mvn .mvn
COPY client client
COPY spring spring
COPY src src
COPY bin bin

# The cache mount keeps ~/.m2 (Maven itself and the dependencies) between builds (BuildKit).
# maven.test.skip also skips compiling tests, so no test-only dependency is downloaded; cds.skip
# the build's own archive (its paths are this stage's; stage 2 makes the one the image uses).
RUN --mount=type=cache,target=/root/.m2 \
    ./mvnw -B -ntp -Dmaven.test.skip=true -Dcds.skip=true -pl :leasehold -am package \
 && java -Djarmode=tools -jar target/leasehold-[0-9]*[0-9T].jar extract --destination /src/app \
      --application-filename leasehold.jar \
 && for j in client/target/leasehold-client-*.jar; do \
      case "$j" in *-sources.jar|*-javadoc.jar|*-tests.jar) ;; *) cp "$j" /src/leasehold-client.jar ;; esac; \
    done


FROM eclipse-temurin:17-jre

# A fixed, unprivileged UID/GID so Kubernetes can check runAsNonRoot and set fsGroup.
ARG UID=10001
ARG GID=10001
RUN groupadd --system --gid "${GID}" leasehold \
 && useradd --system --uid "${UID}" --gid "${GID}" --home-dir /app --no-create-home \
            --shell /usr/sbin/nologin leasehold \
 && mkdir -p /app /data \
 && chown "${UID}:${GID}" /data \
 && chmod 0750 /data

WORKDIR /app
# The server: the application jar (its manifest names the libraries in lib/) and the libraries.
# `java -jar /app/leasehold.jar` runs it as the fat jar would.
COPY --from=build --chown=root:root --chmod=0444 /src/app/leasehold.jar /app/leasehold.jar
COPY --from=build --chown=root:root --chmod=0444 /src/app/lib /app/lib
# The command line, for operators inside the pod: kubectl exec leasehold-0 -- bin/leasehold cluster members
COPY --from=build --chown=root:root --chmod=0444 /src/leasehold-client.jar /app/bin/leasehold-client.jar
COPY --from=build --chown=root:root --chmod=0555 /src/bin/leasehold /app/bin/leasehold

# The AppCDS archive /app/leasehold.jsa: a training run of the server (ports 0, a throw-away data
# directory under /tmp, one grant, then SIGTERM) with this image's JVM and jars, before any ENV
# below reaches it. The script is not kept in the image.
COPY --from=build --chown=root:root --chmod=0555 /src/bin/leasehold-cds /tmp/leasehold-cds
RUN /tmp/leasehold-cds /app \
 && chmod 0444 /app/leasehold.jsa \
 && rm -rf /tmp/leasehold-cds /tmp/hsperfdata_root

# The data directory holds the fsync'd token high-water mark and the lease horizon: it must
# outlive the container. Mount a volume (or a PersistentVolumeClaim) here; one writer only.
ENV LEASEHOLD_DATA_DIR=/data

# The server binds loopback unless told otherwise; in a container the ports must be reachable
# from outside it (the published ports, the pod's address). Plaintext: see docs/security.md.
ENV LEASEHOLD_ADDRESS=0.0.0.0 SERVER_ADDRESS=0.0.0.0
VOLUME ["/data"]

# Container-aware JVM defaults: heap sized from the cgroup memory limit, and a clean exit (so
# the orchestrator restarts the process) instead of limping on after an OutOfMemoryError.
# Override the whole variable to change them; the chart sets it from `jvm.toolOptions`.
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"

# 7420: lock protocol (TCP). 7421: HTTP, Actuator only (health, info, prometheus).
EXPOSE 7420 7421

USER 10001:10001

# Exec form: the JVM is PID 1 and receives SIGTERM itself, so Spring closes the context and
# the server drains (queued Acquires get B) before exit. The archive only speeds the start: if
# it cannot be used, the JVM warns and starts without it.
ENTRYPOINT ["java", "-XX:SharedArchiveFile=/app/leasehold.jsa", "-jar", "/app/leasehold.jar"]
