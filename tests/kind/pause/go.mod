module pstrain/tests/kind/pause

go 1.24.0
