"""The Clarus server: one FastAPI app speaking HTTP, OpenEnv's WebSocket protocol and MCP."""
