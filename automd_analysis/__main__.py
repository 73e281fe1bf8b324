from automd_analysis.cli import main

main()
