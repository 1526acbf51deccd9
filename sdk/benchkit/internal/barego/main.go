// Command barego only starts and exits: the floor of any Go binary.
package main

func main() {}
