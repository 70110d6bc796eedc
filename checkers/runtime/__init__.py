"""Starting and keeping the JVM the checks run in, and nothing about what they check.

java_runtime   which Java Spark is given, and why that one
class_archive  the ahead-of-time class caches a checker JVM maps (names, paths, options)
connect        the Spark Connect servers: a shared warm one, one of a command's own, a user's remote
session        the Spark session a check gets: JVM and Spark settings sized to its input
"""
