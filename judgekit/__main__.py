from judgekit.cli import main

main()
