#!/bin/sh
#PBS -v CORPUS_MARKER,HOME
#PBS -l nodes=8:ppn=2
./cellwall execute
