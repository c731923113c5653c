# federator's image (make image): the static binary alone, built on the host
# with CGO_ENABLED=0 into the build context (no base image is needed or
# pulled), run as a non-root UID. The controller reads the hub through its
# in-cluster config and members through the credentials on the hub.
FROM scratch
COPY federator /federator
# A writable /tmp: the binary links controller-runtime's envtest (for
# `federator up`), whose init makes a cache directory there and panics
# without one. Mount an emptyDir at /tmp where the root filesystem is
# read-only.
COPY --chown=65532:65532 tmp /tmp
USER 65532:65532
ENTRYPOINT ["/federator"]
CMD ["controller"]
