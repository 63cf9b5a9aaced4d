# dynastore in a container: `docker build -t dynastore .` then `docker run -p 8000:8000 dynastore`.
# docs/container.md explains the volume, the environment variables and how this file was verified.

# ---- build stage: the compiled wheel (mypyc needs a C compiler) and the wheels of its dependencies ----------------
FROM python:3.11-slim AS build
# The compiler comes from the base image's Debian release; pinning its exact version would break on every update.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY pyproject.toml setup.py README.md constraints.txt ./
COPY src ./src
# The dependencies at the versions the tests run with (constraints.txt); dynastore itself compiled on every core.
RUN pip wheel --no-cache-dir --constraint constraints.txt --wheel-dir /wheels .

# ---- runtime stage: no compiler, a virtual environment without pip, a user without privileges ---------------------
FROM python:3.11-slim
# Listening on every interface: clients reach it as localhost or by address; a client that uses a host name (a
# Compose service name) needs it in DYNASTORE_ALLOWED_HOSTS, against DNS rebinding (docs/container.md).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/dynastore/bin:$PATH \
    DYNASTORE_HOST=0.0.0.0 \
    DYNASTORE_PORT=8000 \
    DYNASTORE_DATA_DIR=/data
# The venv's own pip installs the wheels, then leaves: the image serves, it installs nothing at run time.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m venv /opt/dynastore \
    && /opt/dynastore/bin/pip install --no-cache-dir --no-index --find-links /wheels dynastore \
    && /opt/dynastore/bin/pip uninstall --yes --quiet pip \
    && groupadd --system --gid 10001 dynastore \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin dynastore \
    && mkdir /data \
    && chown dynastore:dynastore /data
# Numeric, so that a platform can tell it is not root without the image's /etc/passwd (Kubernetes' runAsNonRoot).
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
# GET / is the health answer ("healthy: ..."); any other answer, or none within 3 s, counts as a failure.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['DYNASTORE_PORT'] + '/', timeout=2)"]
# The server is PID 1: it stops cleanly on SIGTERM (docker stop), its last writes made durable.
CMD ["dynastore", "serve"]
