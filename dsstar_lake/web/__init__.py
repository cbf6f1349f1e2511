"""`dslake serve`: server-rendered pages over the catalog, the runs and the reports (Starlette, Jinja2, uvicorn)."""
