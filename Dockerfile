# A small static image of benchci: the binary alone on distroless/static
# (CA roots, tzdata, a nonroot user), for load-generator pods.
#
#   docker build -t ghcr.io/OWNER/benchci:dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.Version=${VERSION}" -o /out/benchci ./cmd/benchci

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/benchci /benchci
USER nonroot:nonroot
ENTRYPOINT ["/benchci"]
