# syntax=docker/dockerfile:1
# The ebsmigrate container image (docs/deploy.md#the-container-image): built on Debian bookworm
# with scripts/build-release (the same script CI builds with), run on bookworm-slim with only the
# binary and the shared libraries it links. Templates and the bundled price list are embedded in
# the binary. No shell or init is needed: the binary handles SIGTERM itself.
#   docker build -t ebsmigrate:0.1.0 .
# Case 1374 checks this file: pinned base images, no ADD of URLs, a numeric non-root USER, and that
# every library `ldd` lists for the binary comes from a package the runtime stage installs (or
# from the base image's essential set).

ARG DEBIAN=bookworm

FROM debian:${DEBIAN} AS build
WORKDIR /src
COPY . .
# build-release installs the Debian build packages (lib.sh EM_BUILD_PACKAGES) and builds
RUN EM_BUILD_TARGET=ebsmigrate EM_BUILD_DIR=/build scripts/build-release /build \
    && strip -o /ebsmigrate /build/ebsmigrate \
    && /ebsmigrate version

FROM debian:${DEBIAN}-slim AS runtime
# runtime packages: the libraries the binary links (the check reads this list) + the CA bundle
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
         ca-certificates \
         libcjson1 \
         libcurl4 \
         libexpat1 \
         libmicrohttpd12 \
         libsqlite3-0 \
         libssl3 \
         libyaml-0-2 \
         zlib1g \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /ebsmigrate /usr/local/bin/ebsmigrate
# Nothing is written outside mounted volumes: the database with --db (or XDG_STATE_HOME), staged
# output files next to their targets, temporary files under TMPDIR; HOME is read for ~/.aws and
# ~/.kube only. With readOnlyRootFilesystem mount a volume at /tmp (deploy/base does).
ENV HOME=/tmp TMPDIR=/tmp XDG_STATE_HOME=/var/lib/ebsmigrate NO_COLOR=1
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/ebsmigrate"]
CMD ["help"]
