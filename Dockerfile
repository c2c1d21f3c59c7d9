# The Clarus Space: `clarus serve` (HTTP, OpenEnv WebSocket, MCP and the /web page) on the
# port the Space's README front matter names (app_port: 7860). Dependencies come from the
# pinned lock; the package is installed editable because it finds schemas/ and bundles/ next
# to itself in the source tree.
FROM python:3.11.14-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Spaces run the container as uid 1000; own the app directory so nothing needs root
RUN useradd --create-home --uid 1000 clarus
WORKDIR /home/clarus/app

COPY --chown=clarus:clarus requirements/lock.txt requirements/lock.txt
COPY --chown=clarus:clarus pyproject.toml README.md ./
COPY --chown=clarus:clarus clarus_env clarus_env
COPY --chown=clarus:clarus schemas schemas
COPY --chown=clarus:clarus bundles bundles

RUN pip install -c requirements/lock.txt -e '.[server]'

USER clarus
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:7860/health', timeout=4)"]
CMD ["clarus", "serve", "--host", "0.0.0.0", "--port", "7860"]
