# Build: a static binary, no cgo.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/robotsproxy .

# Run: distroless static (CA certificates included), as the nonroot user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/robotsproxy /usr/local/bin/robotsproxy
COPY config.yaml /etc/robotsproxy/config.yaml
USER nonroot:nonroot
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/robotsproxy", "serve", "-config", "/etc/robotsproxy/config.yaml", "-listen", "0.0.0.0:8080", "-admin-listen", "0.0.0.0:9090"]
