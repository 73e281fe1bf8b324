"""Demo tasks built from real public cohorts, and the scripted-agent demo archive."""
