# syntax=docker/dockerfile:1.7
# governord in a container: a static binary on an empty image, run as a user
# without privileges, the record on a volume.
#   docker build -t governord .
#   docker run -v governor-data:/var/lib/governor -v ./governor.yaml:/etc/governor/governor.yaml:ro \
#     -e GOVERNOR_ADMIN_KEY -e GOVERNOR_API_KEY --network host governord
# deploy/compose.yaml runs it with Prometheus and Grafana; deploy/check builds
# the binaries the same way (deploy/build-static.sh) and checks them.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.work go.mod go.sum ./
COPY cmd/go.mod cmd/go.sum cmd/
RUN go mod download
COPY . .
RUN deploy/build-static.sh /out/bin && mkdir -p /out/data /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/bin/governord /out/bin/governor /usr/local/bin/
COPY --from=build --chown=65532:65532 /out/data /var/lib/governor
COPY --from=build --chmod=1777 /out/tmp /tmp
COPY deploy/governor.container.yaml /etc/governor/governor.yaml
USER 65532:65532
WORKDIR /var/lib/governor
VOLUME /var/lib/governor
ENV GOVERNOR_DATABASE_URL=sqlite:/var/lib/governor/governor.db
EXPOSE 7600 7601
HEALTHCHECK --interval=10s --timeout=6s --start-period=30s \
  CMD ["/usr/local/bin/governord", "-config", "/etc/governor/governor.yaml", "-health"]
ENTRYPOINT ["/usr/local/bin/governord"]
CMD ["-config", "/etc/governor/governor.yaml"]
