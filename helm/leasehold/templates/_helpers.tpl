{{/* Chart name, truncated to the 63 characters a DNS label allows. */}}
{{- define "leasehold.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name. The release name is used as is when it already contains the chart
name. Kept to 52 characters: the StatefulSet controller adds a revision label of
<name>-<hash> that must fit in 63.
*/}}
{{- define "leasehold.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "leasehold.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "leasehold.labels" -}}
helm.sh/chart: {{ include "leasehold.chart" . }}
{{ include "leasehold.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "leasehold.selectorLabels" -}}
app.kubernetes.io/name: {{ include "leasehold.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "leasehold.headlessName" -}}
{{- printf "%s-headless" (include "leasehold.fullname" .) }}
{{- end }}

{{- define "leasehold.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "leasehold.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "leasehold.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
leasehold.drainTimeout in whole seconds, rounded up. Accepts <n>ms, <n>s or <n>m (the schema
enforces the same), so the chart can keep terminationGracePeriodSeconds above it.
*/}}
{{- define "leasehold.drainTimeoutSeconds" -}}
{{- $d := toString .Values.leasehold.drainTimeout }}
{{- if regexMatch "^[0-9]+ms$" $d }}
{{- div (add (trimSuffix "ms" $d | int64) 999) 1000 }}
{{- else if regexMatch "^[0-9]+s$" $d }}
{{- trimSuffix "s" $d | int64 }}
{{- else if regexMatch "^[0-9]+m$" $d }}
{{- mul (trimSuffix "m" $d | int64) 60 }}
{{- else }}
{{- fail (printf "leasehold.drainTimeout %q: use a whole number with unit ms, s or m, e.g. 10s" $d) }}
{{- end }}
{{- end }}

{{/*
terminationGracePeriodSeconds: explicit value (must exceed the drain timeout) or the drain
timeout plus the margin.
*/}}
{{- define "leasehold.terminationGracePeriodSeconds" -}}
{{- $drain := include "leasehold.drainTimeoutSeconds" . | int64 }}
{{- if .Values.cluster.enabled }}
{{- /* ClusterNode.stop hands leadership over before the drain: allow two election timeouts
(max) for that transfer, rounded up to seconds, on top of the drain. */}}
{{- $e := toString .Values.leasehold.cluster.electionTimeoutMax }}
{{- $eMs := 0 }}
{{- if regexMatch "^[0-9]+ms$" $e }}{{- $eMs = trimSuffix "ms" $e | int64 }}
{{- else if regexMatch "^[0-9]+s$" $e }}{{- $eMs = mul (trimSuffix "s" $e | int64) 1000 }}
{{- else }}{{- fail (printf "leasehold.cluster.electionTimeoutMax %q: use a whole number with unit ms or s" $e) }}
{{- end }}
{{- $drain = add $drain (div (add (mul $eMs 2) 999) 1000) }}
{{- end }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add $drain (.Values.terminationGraceMarginSeconds | int64) }}
{{- else }}
{{- $grace := .Values.terminationGracePeriodSeconds | int64 }}
{{- if le $grace $drain }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be greater than leasehold.drainTimeout (%s) plus, in cluster mode, the leadership transfer (2 x electionTimeoutMax) = %ds, or the pod is killed mid-drain" $grace (toString .Values.leasehold.drainTimeout) $drain) }}
{{- end }}
{{- $grace }}
{{- end }}
{{- end }}

{{/*
The application.yml the ConfigMap carries: extraConfig, overlaid with the keys the chart
owns (leasehold.*, server.port), which therefore win. Integer settings go through int64 so
they render as integers whichever way they were given (values file or --set).
*/}}
{{- define "leasehold.applicationYaml" -}}
{{- $l := .Values.leasehold }}
{{- $tlsBundle := include "leasehold.tlsBundle" . }}
{{- $clientAuth := $l.tls.clientAuth | default "none" }}
{{- if and (ne $clientAuth "none") (not $tlsBundle) }}
{{- fail (printf "leasehold.tls.clientAuth=%s needs TLS: set tls.secretName (or leasehold.tls.bundle)" $clientAuth) }}
{{- end }}
{{- if and $l.acl (eq $clientAuth "none") }}
{{- fail "leasehold.acl needs client certificates: set leasehold.tls.clientAuth to want or need (and tls.secretName)" }}
{{- end }}
{{- /* Spring Boot keeps only [a-z0-9-.] in map keys unless they are in brackets. */}}
{{- $acl := dict }}
{{- range $identity, $prefixes := ($l.acl | default dict) }}
{{- $_ := set $acl (printf "[%s]" $identity) $prefixes }}
{{- end }}
{{- $leasehold := dict
      "port" ($l.port | int64)
      "address" (toString $l.address)
      "listen-backlog" ($l.listenBacklog | int64)
      "data-dir" .Values.persistence.mountPath
      "max-key-bytes" ($l.maxKeyBytes | int64)
      "max-waiters-per-key" ($l.maxWaitersPerKey | int64)
      "max-waiters-total" ($l.maxWaitersTotal | int64)
      "max-pending-per-session" ($l.maxPendingPerSession | int64)
      "max-held-keys" ($l.maxHeldKeys | int64)
      "max-connections" ($l.maxConnections | int64)
      "frame-timeout" (toString $l.frameTimeout)
      "token-block-size" ($l.tokenBlockSize | int64)
      "io-threads" ($l.ioThreads | int64)
      "recovery-grace" (toString $l.recoveryGrace)
      "recovery-lookahead" (toString $l.recoveryLookahead)
      "recovery-clock-slack" (toString $l.recoveryClockSlack)
      "drain-timeout" (toString $l.drainTimeout)
      "lock-delay" (toString $l.lockDelay)
      "max-shared-holders-per-key" ($l.maxSharedHoldersPerKey | int64)
      "max-shared-total" ($l.maxSharedTotal | int64)
      "max-wait" (toString $l.maxWait)
      "max-watches-per-session" ($l.maxWatchesPerSession | int64)
      "max-watches-total" ($l.maxWatchesTotal | int64)
      "max-value-bytes" ($l.maxValueBytes | int64)
      "tls" (dict "bundle" $tlsBundle "client-auth" $clientAuth)
      "acl" $acl
      "restore-from" (toString ($l.restoreFrom | default ""))
      "cluster" (include "leasehold.clusterConfig" . | fromYaml) }}
{{- $owned := dict "leasehold" $leasehold "server" (dict "port" (.Values.management.port | int64) "address" (toString .Values.management.address)) }}
{{- if .Values.cluster.enabled }}
{{- /* The admin endpoint behind `bin/leasehold cluster ...`; it refuses callers not on loopback,
so only `kubectl exec` into a pod reaches it. */}}
{{- $_ := set $owned "management" (dict "endpoints" (dict "web" (dict "exposure" (dict "include" "health,info,prometheus,cluster,snapshot")))) }}
{{- else }}
{{- /* The token-floor snapshot behind `bin/leasehold admin snapshot save`; loopback only too. */}}
{{- $_ := set $owned "management" (dict "endpoints" (dict "web" (dict "exposure" (dict "include" "health,info,prometheus,snapshot")))) }}
{{- end }}
{{- with .Values.tls.secretName }}
{{- $dir := trimSuffix "/" $.Values.tls.mountPath }}
{{- $bundle := dict
      "reload-on-update" $.Values.tls.reloadOnUpdate
      "keystore" (dict "certificate" (printf "file:%s/tls.crt" $dir) "private-key" (printf "file:%s/tls.key" $dir)) }}
{{- if ne $clientAuth "none" }}
{{- $_ := set $bundle "truststore" (dict "certificate" (printf "file:%s/ca.crt" $dir)) }}
{{- end }}
{{- $_ := set $owned "spring" (dict "ssl" (dict "bundle" (dict "pem" (dict "leasehold" $bundle)))) }}
{{- end }}
{{- with .Values.cluster.tls.secretName }}
{{- if not $.Values.cluster.enabled }}
{{- fail "cluster.tls.secretName needs cluster.enabled: a single node has no Raft port" }}
{{- end }}
{{- $dir := trimSuffix "/" $.Values.cluster.tls.mountPath }}
{{- $peer := dict
      "reload-on-update" $.Values.cluster.tls.reloadOnUpdate
      "keystore" (dict "certificate" (printf "file:%s/tls.crt" $dir) "private-key" (printf "file:%s/tls.key" $dir))
      "truststore" (dict "certificate" (printf "file:%s/ca.crt" $dir)) }}
{{- $spring := get $owned "spring" | default (dict "ssl" (dict "bundle" (dict "pem" dict))) }}
{{- $_ := set $spring.ssl.bundle.pem "leasehold-peer" $peer }}
{{- $_ := set $owned "spring" $spring }}
{{- end }}
{{- $config := mergeOverwrite (deepCopy (.Values.extraConfig | default dict)) $owned }}
{{- toYaml $config }}
{{- end }}

{{/*
The SSL bundle of the protocol port: leasehold.tls.bundle, else "leasehold" (the chart's bundle
from tls.secretName) when a Secret is set, else "" (plaintext).
*/}}
{{- define "leasehold.tlsBundle" -}}
{{- if .Values.leasehold.tls.bundle }}
{{- .Values.leasehold.tls.bundle }}
{{- else if .Values.tls.secretName }}
{{- "leasehold" }}
{{- end }}
{{- end }}

{{/*
The SSL bundle of the Raft port: leasehold.cluster.tls.bundle, else "leasehold-peer" (the
chart's bundle from cluster.tls.secretName) when a Secret is set, else "" (plaintext Raft).
*/}}
{{- define "leasehold.peerTlsBundle" -}}
{{- if .Values.leasehold.cluster.tls.bundle }}
{{- .Values.leasehold.cluster.tls.bundle }}
{{- else if .Values.cluster.tls.secretName }}
{{- "leasehold-peer" }}
{{- end }}
{{- end }}

{{/*
leasehold.cluster.*: the tuning always (equal to the server's defaults), and in cluster mode
every peer by its stable DNS name. join stays false here: the start-up shell sets
LEASEHOLD_CLUSTER_JOIN=true for pods past cluster.founders (statefulset.yaml); the Raft port binds
every interface of the pod. The node id comes from the pod name (LEASEHOLD_CLUSTER_NODEID).
*/}}
{{- define "leasehold.clusterConfig" -}}
{{- $c := .Values.leasehold.cluster }}
{{- /* Ratis property keys contain dots: brackets keep each one a single map key for Spring Boot. */}}
{{- $raft := dict }}
{{- range $k, $v := ($c.raftProperties | default dict) }}
{{- $_ := set $raft (printf "[%s]" $k) (toString $v) }}
{{- end }}
{{- $cfg := dict
      "election-timeout-min" (toString $c.electionTimeoutMin)
      "election-timeout-max" (toString $c.electionTimeoutMax)
      "max-batch" ($c.maxBatch | int64)
      "max-in-flight" ($c.maxInFlight | int64)
      "max-pending" ($c.maxPending | int64)
      "snapshot-every" ($c.snapshotEvery | int64)
      "tls" (dict "bundle" (include "leasehold.peerTlsBundle" .))
      "initial-token" ($c.initialToken | default 0 | int64)
      "join" false
      "raft-bind-address" ""
      "raft-properties" $raft }}
{{- if .Values.cluster.enabled }}
{{- $replicas := .Values.cluster.replicas | int }}
{{- if eq (mod $replicas 2) 0 }}
{{- fail (printf "cluster.replicas=%d: use an odd number of nodes (3 standard)" $replicas) }}
{{- end }}
{{- $founders := include "leasehold.founders" . | int }}
{{- $peers := dict }}
{{- $full := include "leasehold.fullname" . }}
{{- $domain := printf "%s.%s.svc.%s" (include "leasehold.headlessName" .) .Release.Namespace .Values.cluster.clusterDomain }}
{{- /* Only the founders: the members the cluster was first formed with. Later pods join
through `leasehold cluster add` (LEASEHOLD_CLUSTER_JOIN, statefulset.yaml). */}}
{{- range $i := until $founders }}
{{- $host := printf "%s-%d.%s" $full $i $domain }}
{{- $_ := set $peers (printf "%s-%d" $full $i) (dict
      "raft-address" (printf "%s:%d" $host ($.Values.cluster.raftPort | int))
      "client-address" (printf "%s:%d" $host ($.Values.leasehold.port | int))) }}
{{- end }}
{{- $_ := set $cfg "peers" $peers }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/*
cluster.founders: the members the cluster was first formed with (pods 0..founders-1); at most
cluster.replicas.
*/}}
{{- define "leasehold.founders" -}}
{{- $f := .Values.cluster.founders | default 3 | int }}
{{- if gt $f (.Values.cluster.replicas | int) }}
{{- fail (printf "cluster.founders=%d is more than cluster.replicas=%d" $f (.Values.cluster.replicas | int)) }}
{{- end }}
{{- $f }}
{{- end }}
