//! Tasks between two moms over TCP with MUNGE.
