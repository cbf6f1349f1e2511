"""`dslake mcp`: the catalog served to other agents over the Model Context Protocol (server.py).
"""
