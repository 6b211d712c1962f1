# Base images are build arguments, so that a registry mirror can be used:
#   docker build --build-arg GO_IMAGE=mirror.example/golang:1.26 ...
ARG GO_IMAGE=golang:1.26
ARG RUN_IMAGE=gcr.io/distroless/static-debian12:nonroot

# Build: a static binary, no cgo.
FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/robotsproxy .

# Run: distroless static (CA certificates included), as the nonroot user.
FROM ${RUN_IMAGE}
COPY --from=build /out/robotsproxy /usr/local/bin/robotsproxy
COPY config.yaml /etc/robotsproxy/config.yaml
USER nonroot:nonroot
EXPOSE 8080 9090
# Inside a container the listeners must bind beyond loopback, so robotsproxy
# refuses to start until the configuration pins identities
# (identity.users or identity.client_ranges) or the operator says the
# network guards it (-allow-open-proxy / allow_open_proxy: true). See
# "Security model" in README.md.
ENTRYPOINT ["/usr/local/bin/robotsproxy", "serve", "-config", "/etc/robotsproxy/config.yaml", "-listen", "0.0.0.0:8080", "-admin-listen", "0.0.0.0:9090"]
