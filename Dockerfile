# khook's container image: the CLI, the GitHub Action and the GitLab job image.
#
# GitHub runs Docker container actions as root in a mounted workspace, so
# this image sets no USER (the workspace and file-command files would be
# unwritable) and no WORKDIR (GitHub makes the workspace the working
# directory). khook itself needs no root: it runs unchanged as any uid, with
# a read-only root filesystem and no HOME (Helm's cache and config go to a
# temp dir).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/khook/khook/internal/cli/version.Version=${VERSION} -X github.com/khook/khook/internal/cli/version.Commit=${COMMIT} -X github.com/khook/khook/internal/cli/version.Date=${DATE}" \
      -o /out/khook . \
 && mkdir -p /out/tmp && chmod 1777 /out/tmp

# GitLab's runner runs a job's script with the image's sh, so the GitLab job
# image adds a static busybox shell: docker build --target gitlab.
FROM busybox:1.37-musl AS gitlab
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/khook /usr/local/bin/khook
ENV TMPDIR=/tmp
ENTRYPOINT ["/usr/local/bin/khook"]

# The final stage (the CLI and GitHub Action image; releases build the same shape
# from Dockerfile.release) holds the static binary, CA certificates and an empty
# world-writable /tmp: no shell, no package manager.
FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/tmp /tmp
COPY --from=build /out/khook /usr/local/bin/khook
ENV TMPDIR=/tmp
ENTRYPOINT ["/usr/local/bin/khook"]
