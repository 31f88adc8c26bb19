from explorer.app import main

main()
