# Atoll with git and Terraform, built with the same make targets as CI.
#   docker build -t atoll --build-arg VERSION=$(git describe --always) .
#   docker run -p 4141:4141 -v atoll-data:/data atoll server --demo
# cmd/atoll/deploy_test.go checks the make targets and the runtime stage.

FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV GOTOOLCHAIN=local CGO_ENABLED=0 CHECKPOINT_DISABLE=1
# Terraform is built from source by the Makefile's $(CURDIR)/bin/terraform
# rule (about five minutes). It only depends on the Makefile, so this layer
# stays cached while the code changes.
COPY Makefile ./
RUN make /src/bin/terraform
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN GOFLAGS="-trimpath -ldflags=-X=main.Version=${VERSION}" make build

FROM debian:bookworm-slim
# git for checkouts, ca-certificates for GitHub and providers, openssh-client
# for git::ssh module sources, tini to reap the processes Terraform leaves.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git openssh-client tini \
 && rm -rf /var/lib/apt/lists/*
# A fixed uid: Fly mounts the volume for the image's user, and a bind mount
# needs `chown 10001:10001` on the host.
RUN groupadd --system --gid 10001 atoll \
 && useradd --system --uid 10001 --gid atoll --home-dir /data --shell /usr/sbin/nologin atoll \
 && mkdir -p /data \
 && chown atoll:atoll /data
COPY --from=build /src/bin/atoll /usr/local/bin/atoll
COPY --from=build /src/bin/terraform /usr/local/bin/terraform
ENV ATOLL_DATA_DIR=/data ATOLL_TERRAFORM_BIN=/usr/local/bin/terraform CHECKPOINT_DISABLE=1 HOME=/data
USER atoll
WORKDIR /data
VOLUME ["/data"]
EXPOSE 4141
# tini -s reaps orphans even when it is not PID 1 (on Fly, Fly's init is).
# Signals go to atoll only: it stops Terraform itself (SIGINT, then SIGKILL).
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "atoll"]
CMD ["server"]
