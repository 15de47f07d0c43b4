#!/bin/bash

#PBS -V
#PBS -N bluesky_test
## Define compute options
#PBS -l nodes=1:dev:amd:ppn=4
  ##PBS -l nodes=1:dev:intel:ppn=4
#PBS -l mem=16gb
#PBS -l walltime=01:00:00
#PBS -q batch
#PBS -k o
  ##PBS -j oe
#PBS -e /tmp/corpus-out/bluesky_test.e
#PBS -o /tmp/corpus-out/bluesky_test.o
#PBS -M someone@wsu.edu
#PBS -m abe
echo "Hello world!"
