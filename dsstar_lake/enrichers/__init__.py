"""The model passes of `dslake index --analyzer llm|auto`, as index/'s enrichers: the paper's analyzer (analyzer_pass.py) and the summarizer of wordless entries (summarizer_pass.py).
"""
