# SPDX-License-Identifier: MIT
# The shared core. CORE_SRCS compile into the module and the library;
# CORE_USER_SRCS (text parsers, code formatting) into the library only.
CORE_SRCS :=
CORE_USER_SRCS :=
