from inferplane.app.program import main

main()
