# Base images are build arguments, so that a registry mirror can be used:
#   docker build --build-arg GO_IMAGE=mirror.example/golang:1.26 ...
ARG GO_IMAGE=golang:1.26
ARG RUN_IMAGE=gcr.io/distroless/static-debian12:nonroot

# Build: a static binary, no cgo. VERSION is the release (the file VERSION,
# which the Helm chart's appVersion repeats; deploy/docker_test.go checks
# they agree) and COMMIT the git commit, both printed by
# "robotsproxy version":
#   docker build --build-arg VERSION=$(cat VERSION) --build-arg COMMIT=$(git rev-parse HEAD) -t robotsproxy:$(cat VERSION) .
FROM ${GO_IMAGE} AS build
ARG VERSION=1.0.0
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/robotsproxy .

# Run: distroless static (CA certificates included), as the nonroot user.
FROM ${RUN_IMAGE}
ARG VERSION=1.0.0
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="robotsproxy" \
      org.opencontainers.image.description="A forward HTTP(S) proxy that makes crawlers obey robots.txt (RFC 9309)" \
      org.opencontainers.image.source="https://github.com/robotsproxy/robotsproxy" \
      org.opencontainers.image.url="https://github.com/robotsproxy/robotsproxy" \
      org.opencontainers.image.documentation="https://github.com/robotsproxy/robotsproxy/tree/main/docs" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
COPY --from=build /out/robotsproxy /usr/local/bin/robotsproxy
COPY deploy/docker/config.yaml /etc/robotsproxy/config.yaml
USER nonroot:nonroot
# 8080: the proxy; 9090: the admin listener (/healthz, /readyz, /metrics).
EXPOSE 8080 9090
# A distroless image has no shell or curl: the binary probes itself.
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/robotsproxy", "healthcheck", "-addr", "127.0.0.1:9090", "-timeout", "3s"]
# Inside a container the listeners must bind beyond loopback, so robotsproxy
# refuses to start unless the configuration pins identities
# (identity.users or identity.client_ranges) or the operator says the
# network guards it (allow_open_proxy: true, as deploy/docker/config.yaml
# does, with its warning). See the security model in the docs.
ENTRYPOINT ["/usr/local/bin/robotsproxy", "serve", "-config", "/etc/robotsproxy/config.yaml", "-listen", "0.0.0.0:8080", "-admin-listen", "0.0.0.0:9090"]
