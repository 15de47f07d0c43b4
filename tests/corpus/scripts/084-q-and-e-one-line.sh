#!/bin/bash
#
#PBS -N cppqed_job
#PBS -q eternity -e errorfiles
echo run
